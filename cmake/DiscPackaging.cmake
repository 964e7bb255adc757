# DiscPackaging.cmake - Debian packages of DISC through CPack.
#
#   cmake --build build --target package-deb     (or: cd build && cpack -G DEB)
#
# makes two packages from the install components:
#   disc-runtime  libdisc_runtime.so.1, headers, CMake package, pkg-config
#                 file, runtime docs and examples (component `runtime`)
#   disc-tools    disc-compile, disc-opt, disc-run (component `tools`);
#                 depends on disc-runtime and on a C compiler (disc-compile
#                 links model.so with `cc`).
# disc-runtime's dependencies come from dpkg-shlibdeps; disc-tools lists
# the Debian 12 packages of the libraries its tools link (those of the -dev
# packages in scripts/bootstrap.sh): dpkg-shlibdeps over libLLVM and libMLIR
# takes over a minute and cannot see libdisc_runtime.so.1 in the other
# package.
set(CPACK_PACKAGE_NAME disc)
set(CPACK_PACKAGE_VENDOR "DISC")
set(CPACK_PACKAGE_CONTACT "DISC developers <disc@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "DISC: a dynamic-shape deep learning compiler and its runtime")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

set(CPACK_COMPONENTS_ALL runtime tools)
set(CPACK_COMPONENT_RUNTIME_DISPLAY_NAME "DISC runtime")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
  "Runtime library (C and C++ API) that loads and runs compiled models")
set(CPACK_COMPONENT_TOOLS_DISPLAY_NAME "DISC tools")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
  "disc-compile (ONNX to model.so), disc-run and disc-opt")
set(CPACK_COMPONENT_TOOLS_DEPENDS runtime)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME disc-runtime)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME disc-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libc6, libstdc++6, libonnx1, libprotobuf32")
if(DISC_BUILD_COMPILER)
  string(APPEND CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS
    ", libmlir-22, libllvm22, libz3-4, gcc | c-compiler")
endif()
include(CPack)

add_custom_target(package-deb
  COMMAND ${CMAKE_CPACK_COMMAND} -G DEB
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}
  COMMENT "Building the disc-runtime and disc-tools Debian packages"
  USES_TERMINAL)
