# cmake -DSKIFF_SOURCE_DIR=... -DWORK_DIR=... -DCXX=... -DGENERATOR=... -P fetch_by_git.cmake
# The README's FetchContent route, pinned by commit as printed there (tags do not travel with
# this repository, so nothing may depend on one): the source's HEAD commit is fetched into a
# scratch bare repository as a branch, with no tag, and the consumer fetches
# file://<scratch> at GIT_TAG <that commit's hash>. The source repository is only read. What is
# fetched is the committed HEAD: uncommitted edits are not in it.
set(origin ${WORK_DIR}/origin.git)
set(consumer ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

include(${CMAKE_CURRENT_LIST_DIR}/run_step.cmake)

find_program(GIT git REQUIRED)
execute_process(COMMAND ${GIT} -C ${SKIFF_SOURCE_DIR} rev-parse --verify HEAD
                RESULT_VARIABLE rc OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(STATUS "SKIP: ${SKIFF_SOURCE_DIR} is not a git checkout")
  return()
endif()
# A bare repository holding the source's HEAD (detached or not) as its one branch: no tags.
run_step(${GIT} init --quiet --bare ${origin})
run_step(${GIT} -C ${origin} fetch --quiet --no-tags ${SKIFF_SOURCE_DIR} HEAD:refs/heads/main)

run_step(${CMAKE_COMMAND} -S ${SKIFF_SOURCE_DIR}/tests/cmake/fetch_content -B ${consumer} -G ${GENERATOR}
         -DCMAKE_CXX_COMPILER=${CXX} -DSKIFF_GIT_URL=file://${origin} -DSKIFF_GIT_TAG=${head})
if(NOT EXISTS ${consumer}/_deps/skiff-src/include/skiff/version.hpp)
  message(FATAL_ERROR "FetchContent did not check skiff out under ${consumer}/_deps/skiff-src")
endif()
run_step(${CMAKE_COMMAND} --build ${consumer})
run_step(${consumer}/consumer)
message(STATUS "fetched file://${origin} at commit ${head} (no tag), built and ran the consumer")
