# cmake -DIN=<file> -DOUT=<file.inc> -P EmbedFile.cmake: writes IN's text as
# one C++ raw string literal, for `#include` in an initializer.
file(READ "${IN}" content)
file(WRITE "${OUT}" "R\"disc_embed(${content})disc_embed\"\n")
