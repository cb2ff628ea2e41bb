# cmake -DBINARY=<file> -P no_feature_symbols.cmake: fails if BINARY, a program that uses no
# feature (the hello example), holds code of one. Features reach a connection only through the
# door of engine/handover.hpp, so one that is not used is not compiled in. The names below are
# those of the features that compile away today: deferred answers, push streams and the hub
# (async/), file bodies and sendfile (files/), streamed response bodies, streamed uploads and
# multipart, metrics, the access log, and WebSocket (websocket/: its handshake, frames and taker).
execute_process(COMMAND nm -C ${BINARY} OUTPUT_VARIABLE all RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${BINARY}")
endif()
foreach(symbol answer_wait deferred async_hub push_stream sse_stream loop_ref file_send file_body sendfile stream_send
               upload_state upload_route multipart metric_counter metrics_writer access_log
               websocket ws_taker ws_state)
  string(FIND "${all}" "${symbol}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${BINARY} holds ${symbol}: a feature it does not use was compiled in")
  endif()
endforeach()
string(FIND "${all}" "skiff::" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${BINARY} names no skiff symbol: is it a skiff program with symbols at all?")
endif()
message(STATUS "${BINARY}: no feature it does not use")
