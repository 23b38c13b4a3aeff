# cmake -DPROGRAM=<exe> -DNAME=<name> -DVERSION=<v> -DOUTPUT=<page.1> -P HelpToMan.cmake
# A man page from the program's --help: NAME from its first line, the whole
# help text as the description, verbatim (no-fill), roff's specials escaped.
execute_process(COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen ${PROGRAM} --help
                OUTPUT_VARIABLE help ERROR_VARIABLE help_err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "${NAME} --help failed (${rc}): ${help_err}")
endif()
string(REPLACE "${PROGRAM}" "${NAME}" help "${help}") # Qt's usage line names the path
# The summary: CLI11 puts it first ("name: what it does"), Qt after the usage line.
string(REGEX MATCH "^[^\n]*" summary "${help}")
if(summary MATCHES "^Usage:")
  string(REGEX MATCH "^[^\n]*\n([^\n]*)" unused "${help}")
  set(summary "${CMAKE_MATCH_1}")
endif()
string(REGEX REPLACE "^${NAME}: *" "" summary "${summary}")
# roff: backslashes, then lines starting with . or ' (control characters)
string(REPLACE "\\" "\\e" body "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" body "${body}")
string(REPLACE "-" "\\-" summary_roff "${summary}")
string(TIMESTAMP date "%Y-%m-%d" UTC)
file(WRITE ${OUTPUT}
".TH ${NAME} 1 \"${date}\" \"Tomo Workstation ${VERSION}\" \"User Commands\"
.SH NAME
${NAME} \\- ${summary_roff}
.SH DESCRIPTION
This page is the text of
.B ${NAME} \\-\\-help.
.PP
.nf
${body}.fi
.SH SEE ALSO
The README of Tomo Workstation (/usr/share/doc/tomo-workstation/README.md).
")
