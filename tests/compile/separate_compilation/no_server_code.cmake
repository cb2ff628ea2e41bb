# cmake -DOBJECT=<file> -P no_server_code.cmake: fails if OBJECT, main.cpp's object, defines a
# member of basic_server<single>, which SKIFF_EXTERN_SERVER says is compiled in server.cpp
# alone. It must still use the server (else the check proves nothing).
execute_process(COMMAND nm -C ${OBJECT} OUTPUT_VARIABLE all RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${OBJECT}")
endif()
string(REGEX MATCH "[0-9a-f]+ [TtWw] skiff::basic_server<skiff::single>::[^\n]*" defined "${all}")
if(defined)
  message(FATAL_ERROR "${OBJECT} compiles the server it declared extern: ${defined}")
endif()
string(FIND "${all}" " U skiff::basic_server<skiff::single>::" used)
if(used EQUAL -1)
  message(FATAL_ERROR "${OBJECT} calls no member of basic_server<single>: nothing was checked")
endif()
message(STATUS "${OBJECT}: calls the server compiled elsewhere, defines none of it")
