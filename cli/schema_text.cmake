# SPDX-License-Identifier: Apache-2.0
# Writes the report schema (IN, docs/keyshift.report.v2.schema.json) into
# OUT as a C array, ks_cli_schema_text, NUL-terminated: the `keyshift`
# command checks reports against the same text that is published
# (cli/ks_cli_schema.h). Run by cli/CMakeLists.txt at build time.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}"
  "/* generated from ${IN} by cli/schema_text.cmake: do not edit */\n"
  "const char ks_cli_schema_text[] = {${bytes}0};\n")
