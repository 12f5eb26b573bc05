// The golden test vectors (the reference's outputs) as the core's tests read
// them: the folder, one file parsed, one case run with its name on failure.
#pragma once

#include <functional>
#include <string>

#include "json.h"

namespace loadgen_test {

// LOADGEN_GOLDEN_DIR when set, else ../shared/golden beside the repository
// (fixed at configure time by native/CMakeLists.txt).
std::string golden_dir();

// Parses <golden_dir>/<file> into `out`. A missing or unreadable file is a
// failed check naming the path looked at (never a skip): returns false.
bool load_golden(const std::string& file, Json* out);

// Runs one case; a failed check or an exception inside it is reported with
// `where` (e.g. "results_math.json#ss_valid_p90"), and the next case runs.
void golden_case(const std::string& where, const std::function<void()>& run);

// Records a failed check at `where` when `difference` is not empty.
void check_no_difference(const std::string& where, const std::string& difference);

}  // namespace loadgen_test
