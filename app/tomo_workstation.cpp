// tomo-workstation: the desktop application (the widgets live in ui/).
#include "application.h"

int main(int argc, char** argv) { return tomo::ui::runWorkstation(argc, argv); }
