// What every file of this two-file project includes: skiff, and the word that its server
// (the single policy's) is compiled in server.cpp alone (skiff/app/compiled.hpp).
#ifndef SEPARATE_COMPILATION_PROJECT_HPP
#define SEPARATE_COMPILATION_PROJECT_HPP

#include <skiff/skiff.hpp>

SKIFF_EXTERN_SERVER(skiff::single);

#endif
