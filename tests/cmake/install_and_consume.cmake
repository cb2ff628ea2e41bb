# cmake -DSKIFF_SOURCE_DIR=... -DWORK_DIR=... -DCXX=... -DGENERATOR=... -P install_and_consume.cmake
# Configures skiff alone, installs it to a scratch prefix, then builds and runs the
# find_package consumer against that prefix.
set(build ${WORK_DIR}/skiff-build)
set(prefix ${WORK_DIR}/prefix)
set(consumer ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})
foreach(step
    "${CMAKE_COMMAND};-S;${SKIFF_SOURCE_DIR};-B;${build};-G;${GENERATOR};-DCMAKE_CXX_COMPILER=${CXX};-DSKIFF_BUILD_TESTS=OFF;-DSKIFF_BUILD_EXAMPLES=OFF;-DSKIFF_INSTALL=ON"
    "${CMAKE_COMMAND};--install;${build};--prefix;${prefix}"
    "${CMAKE_COMMAND};-S;${SKIFF_SOURCE_DIR}/tests/cmake/find_package;-B;${consumer};-G;${GENERATOR};-DCMAKE_CXX_COMPILER=${CXX};-DCMAKE_PREFIX_PATH=${prefix}"
    "${CMAKE_COMMAND};--build;${consumer}"
    "${consumer}/consumer")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed: ${step}\n${out}")
  endif()
endforeach()
if(NOT EXISTS ${prefix}/include/skiff/skiff.hpp OR NOT EXISTS ${prefix}/share/cmake/skiff/skiffConfig.cmake)
  message(FATAL_ERROR "install layout is not include/skiff + share/cmake/skiff")
endif()
