# The HTML report in a real browser: headless Chromium (Debian's chromium)
# driven by playwright-core from npm (package.json here; `npm ci` installs
# it, as tests/run-all.sh does). Reports come from synthetic runs (hostile
# file names; many steps) and from a real PyTorch job traced with
# `iotap run --torch-steps`. A missing browser, Node.js or playwright-core
# fails these tests with what to install (browser_check.sh).

add_executable(make_sample_runs viewer/make_sample_runs.cc)
target_include_directories(make_sample_runs PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(make_sample_runs PRIVATE iotap_analyzer_testing)

# The Perfetto export of the same real job, decoded and checked.
add_executable(check_perfetto viewer/check_perfetto.cc)
target_include_directories(check_perfetto PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(check_perfetto PRIVATE iotap_analyzer_testing)

set(viewer_dir ${CMAKE_CURRENT_SOURCE_DIR}/viewer)
set(reports ${PROJECT_BINARY_DIR}/viewer-reports)

# The page's sources keep its rules: no markup from data, nothing fetched.
add_test(NAME viewer_sources
  COMMAND ${CMAKE_COMMAND} -DVIEWER_DIR=${PROJECT_SOURCE_DIR}/viewer -P ${viewer_dir}/check_sources.cmake)
set_tests_properties(viewer_sources PROPERTIES LABELS unit)

add_test(NAME viewer_reports_synthetic
  COMMAND ${viewer_dir}/make_reports.sh synthetic ${PROJECT_BINARY_DIR} ${reports})
set_tests_properties(viewer_reports_synthetic PROPERTIES
  FIXTURES_SETUP viewer_synthetic LABELS browser TIMEOUT 120)
add_test(NAME viewer_reports_imagefolder
  COMMAND ${viewer_dir}/make_reports.sh imagefolder ${PROJECT_BINARY_DIR} ${reports})
set_tests_properties(viewer_reports_imagefolder PROPERTIES
  FIXTURES_SETUP viewer_imagefolder LABELS "browser;integration" TIMEOUT 600)

add_test(NAME perfetto_imagefolder
  COMMAND check_perfetto ${reports}/imagefolder.pftrace)
set_tests_properties(perfetto_imagefolder PROPERTIES
  FIXTURES_REQUIRED viewer_imagefolder LABELS integration TIMEOUT 60)

# browser_check NAME FIXTURE REPORT [check_report.mjs options]
function(browser_check name fixture report)
  add_test(NAME ${name} COMMAND ${viewer_dir}/browser_check.sh ${reports}/${report} ${ARGN}
                                --screenshot ${reports}/${name}.png)
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ${fixture} LABELS browser TIMEOUT 180
                                          RESOURCE_LOCK chromium)
endfunction()

browser_check(viewer_browser_hostile viewer_synthetic hostile.html --hostile --steps)
browser_check(viewer_browser_many_steps viewer_synthetic many-steps.html --steps --bucketed)
browser_check(viewer_browser_imagefolder viewer_imagefolder imagefolder.html --steps --python)
