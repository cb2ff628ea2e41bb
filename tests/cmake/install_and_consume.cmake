# cmake -DSKIFF_SOURCE_DIR=... -DWORK_DIR=... -DCXX=... -DGENERATOR=... -DVERSION=x.y.z -P install_and_consume.cmake
# The README's "Installed" route as a user without doctest takes it: configure with no skiff
# option and doctest hidden, install to a scratch prefix, then build and run two consumers
# against that prefix, one through find_package and one through pkg-config.
set(build ${WORK_DIR}/skiff-build)
set(prefix ${WORK_DIR}/prefix)
set(consumer ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

# 1. Configure and install exactly as the README says (plus the compiler under test).
run_step(${CMAKE_COMMAND} -S ${SKIFF_SOURCE_DIR} -B ${build} -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
         -DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON)
if(EXISTS ${build}/tests)
  message(FATAL_ERROR "tests were configured although doctest was hidden: installing would need doctest")
endif()
run_step(${CMAKE_COMMAND} --install ${build} --prefix ${prefix})
foreach(file include/skiff/skiff.hpp include/skiff/testing.hpp include/skiff/fwd.hpp share/cmake/skiff/skiffConfig.cmake
             share/pkgconfig/skiff.pc)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "install layout: ${prefix}/${file} is missing (want include/, share/cmake/skiff, share/pkgconfig)")
  endif()
endforeach()

# 2. find_package.
run_step(${CMAKE_COMMAND} -S ${SKIFF_SOURCE_DIR}/tests/cmake/find_package -B ${consumer} -G ${GENERATOR}
         -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix})
run_step(${CMAKE_COMMAND} --build ${consumer})
run_step(${consumer}/consumer)

# 3. pkg-config: the flags it prints are all a plain compiler call needs.
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
run_step(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/share/pkgconfig ${PKG_CONFIG} --cflags --libs skiff)
string(STRIP "${step_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
if(NOT flags MATCHES "-I${prefix}/include")
  message(FATAL_ERROR "pkg-config --cflags skiff does not name ${prefix}/include: ${flags}")
endif()
run_step(${CXX} -std=c++17 ${flags} ${SKIFF_SOURCE_DIR}/tests/cmake/consumer.cpp -o ${WORK_DIR}/pkg_config_consumer)
run_step(${WORK_DIR}/pkg_config_consumer)
# 4. The installed pkg-config file and CMake package carry the release's version (version.hpp's,
#    which CMake parsed into VERSION; versions_agree ties it to CHANGELOG.md).
run_step(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/share/pkgconfig ${PKG_CONFIG} --modversion skiff)
string(STRIP "${step_output}" pc_version)
file(READ ${prefix}/share/cmake/skiff/skiffConfigVersion.cmake text)
string(REGEX MATCH "set\\(PACKAGE_VERSION \"([^\"]+)\"\\)" _ "${text}")
foreach(got pc_version CMAKE_MATCH_1)
  if(NOT "${${got}}" STREQUAL "${VERSION}")
    message(FATAL_ERROR "installed version disagrees: ${got} is '${${got}}', version.hpp says ${VERSION}")
  endif()
endforeach()
message(STATUS "installed ${VERSION} to ${prefix}: find_package and pkg-config consumers built and ran")
