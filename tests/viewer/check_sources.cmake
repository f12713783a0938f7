# The viewer's sources keep the page's rules (viewer/README.md): data reaches
# the document only as text, and nothing is fetched or evaluated.
#
#   cmake -DVIEWER_DIR=viewer -P tests/viewer/check_sources.cmake

file(GLOB scripts "${VIEWER_DIR}/js/*.js")
set(forbidden
  "innerHTML" "outerHTML" "insertAdjacentHTML" "document.write" "eval(" "new Function"
  "setTimeout('" "setInterval('" "fetch(" "XMLHttpRequest" "WebSocket" "EventSource"
  "sendBeacon" "import(" "importScripts" ".src =" ".href =" "javascript:"
  "window.open" "location.")
set(failures "")
foreach(path IN LISTS scripts "${VIEWER_DIR}/report.html" "${VIEWER_DIR}/report.css")
  file(READ "${path}" text)
  foreach(word IN LISTS forbidden)
    string(FIND "${text}" "${word}" at)
    if(NOT at EQUAL -1)
      list(APPEND failures "${path}: contains '${word}'")
    endif()
  endforeach()
  foreach(word "http://" "https://" "@import" "url(")
    string(REPLACE "'http://www.w3.org/2000/svg'" "" without_ns "${text}")
    string(FIND "${without_ns}" "${word}" at)
    if(NOT at EQUAL -1)
      list(APPEND failures "${path}: names a resource ('${word}')")
    endif()
  endforeach()
endforeach()
list(LENGTH scripts count)
if(count LESS 5)
  list(APPEND failures "found only ${count} scripts under ${VIEWER_DIR}/js")
endif()
if(failures)
  string(REPLACE ";" "\n  " shown "${failures}")
  message(FATAL_ERROR "viewer sources break the page's rules:\n  ${shown}")
endif()
message(STATUS "viewer sources: ${count} scripts checked")
