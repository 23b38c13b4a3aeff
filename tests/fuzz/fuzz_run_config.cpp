// Fuzz target: any text as a run-config JSON (tomo-recon --config, the
// workstation's saved parameters); what parses must print and parse again.
#include "tomo/error.h"
#include "tomo/run_config.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const tomo::RunConfig config = tomo::runConfigFromJson(text);
        // A config that was accepted round-trips through its own JSON.
        if (tomo::toJson(tomo::runConfigFromJson(tomo::toJson(config))) != tomo::toJson(config)) std::abort();
    } catch (const tomo::Error&) {
    }
    return 0;
}
