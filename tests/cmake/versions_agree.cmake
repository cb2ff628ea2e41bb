# cmake -DHEADER=version.hpp -DCONFIG_VERSION=skiffConfigVersion.cmake -DCHANGELOG=CHANGELOG.md
#       -DPROJECT_VERSION=x.y.z -P versions_agree.cmake
# One version everywhere: include/skiff/version.hpp, the CMake project and package version,
# and the newest released heading of CHANGELOG.md (under an "Unreleased" one) must agree.
file(READ ${HEADER} text)
string(REGEX MATCH "SKIFF_VERSION_MAJOR ([0-9]+).*SKIFF_VERSION_MINOR ([0-9]+).*SKIFF_VERSION_PATCH ([0-9]+)" _ "${text}")
set(header_version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")

file(READ ${CONFIG_VERSION} text)
string(REGEX MATCH "set\\(PACKAGE_VERSION \"([^\"]+)\"\\)" _ "${text}")
set(package_version "${CMAKE_MATCH_1}")

file(READ ${CHANGELOG} text)
if(NOT text MATCHES "\n## \\[Unreleased\\]\n")
  message(FATAL_ERROR "${CHANGELOG}: no '## [Unreleased]' section for the changes on their way")
endif()
string(REGEX MATCH "\n## \\[([0-9]+\\.[0-9]+\\.[0-9]+)\\] - [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]\n" _ "${text}")
set(changelog_version "${CMAKE_MATCH_1}")

message(STATUS "version.hpp ${header_version}, CMake project ${PROJECT_VERSION}, "
               "package ${package_version}, CHANGELOG ${changelog_version}")
foreach(v PROJECT_VERSION package_version changelog_version)
  if(NOT "${${v}}" STREQUAL "${header_version}")
    message(FATAL_ERROR "versions disagree: version.hpp says ${header_version}, ${v} is '${${v}}'")
  endif()
endforeach()

# No empty heading: a "### Fixed" with nothing under it says something that is not so.
string(REGEX MATCHALL "\n### [^\n]*\n+(#|$)" empty "${text}")
if(empty)
  message(FATAL_ERROR "${CHANGELOG}: a heading with nothing under it: ${empty}")
endif()
