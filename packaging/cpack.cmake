# SPDX-License-Identifier: Apache-2.0
# The Debian package (packaging/README.md): `cpack -G DEB` in a build tree
# configured with -DCMAKE_INSTALL_PREFIX=/usr (packaging/build-deb.sh does
# it), so that GNUInstallDirs puts libkeyshift.so in the multiarch folder,
# /usr/lib/x86_64-linux-gnu, where plugin.library.paths=libkeyshift finds
# it by its bare name.
set(KEYSHIFT_DEB_MAINTAINER "keyshift maintainers <keyshift@localhost>"
    CACHE STRING "The Debian package's Maintainer field (to be decided)")

# Debian wants the changelog and the manual pages compressed, reproducibly
# (gzip -n). A native package's changelog.gz is in Debian's format: it
# points to CHANGELOG.md.
string(TIMESTAMP KEYSHIFT_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${PROJECT_SOURCE_DIR}/packaging/changelog.Debian.in
               ${PROJECT_BINARY_DIR}/packaging/changelog @ONLY)
set(KS_DEB_GZ)
foreach(f ${PROJECT_BINARY_DIR}/packaging/changelog
          ${PROJECT_SOURCE_DIR}/packaging/keyshift.1
          ${PROJECT_SOURCE_DIR}/packaging/keyshift-replay.1)
  get_filename_component(n ${f} NAME)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/packaging/${n}.gz
    COMMAND gzip -9n -c ${f} > ${PROJECT_BINARY_DIR}/packaging/${n}.gz
    DEPENDS ${f} VERBATIM)
  list(APPEND KS_DEB_GZ ${PROJECT_BINARY_DIR}/packaging/${n}.gz)
endforeach()
add_custom_target(keyshift-deb-gz ALL DEPENDS ${KS_DEB_GZ})
install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_BINARY_DIR}/packaging/keyshift.1.gz
              ${PROJECT_BINARY_DIR}/packaging/keyshift-replay.1.gz
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME keyshift)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
              ${PROJECT_SOURCE_DIR}/docs/using.md
              ${PROJECT_SOURCE_DIR}/docs/properties.md
              ${PROJECT_SOURCE_DIR}/docs/how-it-works.md
              ${PROJECT_SOURCE_DIR}/docs/keyshift-cli.md
              ${PROJECT_SOURCE_DIR}/docs/report-schema.md
              ${PROJECT_SOURCE_DIR}/docs/keyshift.report.v2.schema.json
              ${PROJECT_SOURCE_DIR}/docs/metrics.md
              ${PROJECT_SOURCE_DIR}/packaging/copyright
              ${PROJECT_SOURCE_DIR}/NOTICE
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME keyshift)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${KEYSHIFT_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${KEYSHIFT_DEB_MAINTAINER}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # keyshift_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "rehearse a Kafka partition increase on live producer traffic")
# The Description's long part (CPack puts the summary first, and indents)
set(CPACK_PACKAGE_DESCRIPTION
    "libkeyshift.so is a librdkafka producer plugin
(plugin.library.paths=libkeyshift) that models what raising a topic's
partition count would move, and writes a JSON report (and optionally
Prometheus metrics). The keyshift command shows, draws and merges the
reports; keyshift-replay is a demo producer.")
# Depends from the binaries' NEEDED entries (dpkg-shlibdeps): the plugin and
# the keyshift command need libjansson4 and libc6 (libdeflate is linked in
# statically), keyshift-replay zlib1g (gzip logs); the keyshift
# command (scan: a consumer) and keyshift-replay (a producer) add
# librdkafka1. The plugin itself binds to the
# librdkafka of the program that loads it, so it enhances librdkafka1.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_ENHANCES "librdkafka1")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "kcat, prometheus-node-exporter")
# shlibs for the library; an ldconfig trigger (CMake 3.25's CPack also
# calls ldconfig from postinst/postrm: lintian's maintscript-calls-ldconfig
# warning)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
include(CPack)
