// The one file of the project that compiles the server (skiff/app/compiled.hpp). main.cpp's
// object holds none of it: the test beside this checks with nm.
#include "project.hpp"

SKIFF_COMPILE_SERVER(skiff::single);
