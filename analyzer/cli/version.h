// The version of iotap and the commit it was built from, as `iotap --version`
// prints them:
//
//   std::printf("iotap %s (commit %s)\n", kVersion, kCommit);
//
// Both are written at build time by version.cmake into the iotap program
// alone (not the commands' library), so that a new commit relinks one binary.

#ifndef IOTAP_ANALYZER_CLI_VERSION_H_
#define IOTAP_ANALYZER_CLI_VERSION_H_

namespace iotap::cli {

// The project's version, from project() in CMakeLists.txt: "0.2.0".
extern const char kVersion[];
// The abbreviated hash of the commit built ("1a2b3c4"), with "-dirty" when
// tracked files differed from it; the configured IOTAP_COMMIT; or "unknown"
// for a build outside a git checkout.
extern const char kCommit[];

}  // namespace iotap::cli

#endif  // IOTAP_ANALYZER_CLI_VERSION_H_
