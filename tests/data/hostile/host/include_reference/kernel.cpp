// Pulls the reference in by path.
#include "../reference.cpp"
