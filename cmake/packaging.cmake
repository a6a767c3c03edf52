# Installation and the Debian packages (CPack), included last by the top-level CMakeLists.txt:
#   streetgan         the CLI alone (no Qt), for GPU hosts: `streetgan` and its engine, its man page, the docs
#   streetgan-studio  the desktop app: `streetgan-studio`, its man page, the desktop entry, the
#                     AppStream metainfo and the icons; it depends on streetgan (the studio runs it)
# Dependencies come from dpkg-shlibdeps. `cpack -G DEB` in the build folder writes both .debs;
# packaging/check-debs.sh validates them and installs them into a clean bookworm tree.
include(GNUInstallDirs)

set(STREETGAN_DOC_DIR "${CMAKE_INSTALL_DATADIR}/doc")

# Each package's own doc folder holds its copyright and changelog, as Debian policy asks.
set(_changelog "${CMAKE_BINARY_DIR}/packaging/changelog.gz")
add_custom_command(OUTPUT "${_changelog}"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${CMAKE_BINARY_DIR}/packaging"
  COMMAND gzip -9n -c "${PROJECT_SOURCE_DIR}/packaging/changelog" > "${_changelog}"
  DEPENDS "${PROJECT_SOURCE_DIR}/packaging/changelog"
  VERBATIM)
set(_package_files "${_changelog}")

# Man pages from the programs' own --help (help2man), so they never drift from it.
find_program(HELP2MAN_PROGRAM help2man)
if(HELP2MAN_PROGRAM)
  set(_man "${CMAKE_BINARY_DIR}/packaging/man")
  add_custom_command(OUTPUT "${_man}/streetgan.1.gz"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${_man}"
    COMMAND "${HELP2MAN_PROGRAM}" --no-info --no-discard-stderr
            --name "train a DCGAN on street-level photographs, headless"
            --output "${_man}/streetgan.1" $<TARGET_FILE:streetgan>
    COMMAND gzip -9n -f "${_man}/streetgan.1"
    DEPENDS streetgan
    VERBATIM)
  list(APPEND _package_files "${_man}/streetgan.1.gz")
  install(FILES "${_man}/streetgan.1.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1" COMPONENT cli)
  if(NOT STREETGAN_CLI_ONLY)
    add_custom_command(OUTPUT "${_man}/streetgan-studio.1.gz"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${_man}"
      COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen
              "${HELP2MAN_PROGRAM}" --no-info --no-discard-stderr
              --name "train a DCGAN on street-level photographs and watch it learn"
              --output "${_man}/streetgan-studio.1" $<TARGET_FILE:streetgan-studio>
      COMMAND gzip -9n -f "${_man}/streetgan-studio.1"
      DEPENDS streetgan-studio
      VERBATIM)
    list(APPEND _package_files "${_man}/streetgan-studio.1.gz")
    install(FILES "${_man}/streetgan-studio.1.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1" COMPONENT studio)
  endif()
else()
  message(STATUS "help2man not found: no man pages (packaging/install-deps.sh installs it)")
endif()
add_custom_target(package_files ALL DEPENDS ${_package_files})

install(FILES "${PROJECT_SOURCE_DIR}/packaging/copyright" "${_changelog}"
        DESTINATION "${STREETGAN_DOC_DIR}/streetgan" COMPONENT cli)
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${STREETGAN_DOC_DIR}/streetgan" COMPONENT cli)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${STREETGAN_DOC_DIR}/streetgan/docs" COMPONENT cli)
# bash completion: where bash-completion looks for a command's completion on first use.
install(FILES "${PROJECT_SOURCE_DIR}/packaging/completion/streetgan.bash"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" RENAME streetgan COMPONENT cli)

if(NOT STREETGAN_CLI_ONLY)
  install(FILES "${PROJECT_SOURCE_DIR}/packaging/copyright" "${_changelog}"
          DESTINATION "${STREETGAN_DOC_DIR}/streetgan-studio" COMPONENT studio)
  install(FILES "${PROJECT_SOURCE_DIR}/packaging/org.streetgan.Studio.desktop"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/applications" COMPONENT studio)
  install(FILES "${PROJECT_SOURCE_DIR}/packaging/org.streetgan.Studio.metainfo.xml"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/metainfo" COMPONENT studio)
  install(FILES "${PROJECT_SOURCE_DIR}/resources/icons/org.streetgan.Studio.svg"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps" COMPONENT studio)
  foreach(_size 16 24 32 48 64 128 256)
    install(FILES "${PROJECT_SOURCE_DIR}/resources/icons/hicolor/${_size}x${_size}/apps/org.streetgan.Studio.png"
            DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/${_size}x${_size}/apps" COMPONENT studio)
  endforeach()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME streetgan)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "The StreetGAN Studio developers")
set(CPACK_PACKAGE_CONTACT "The StreetGAN Studio developers <dev@streetgan.org>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
if(STREETGAN_CLI_ONLY)
  set(CPACK_COMPONENTS_ALL cli)
else()
  set(CPACK_COMPONENTS_ALL cli studio)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://streetgan.org/")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME streetgan)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION science)
# Debian's LibTorch runs about 3.7× slower on reference BLAS; SSH carries remote runs.
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS "libopenblas0-pthread, openssh-client")
set(CPACK_COMPONENT_CLI_DESCRIPTION "train a DCGAN on street-level photographs (command line)
StreetGAN trains a deep convolutional GAN on street-level photographs and
works with its runs: sampling, latent-space walks exported as GIF, MP4 or
WebM, Parzen evaluation, TensorBoard files, the original PyTorch tool's
checkpoints, and an HTTP image server. This package holds the headless
`streetgan` program (and its engine) alone, without Qt, for GPU hosts.")
set(CPACK_DEBIAN_STUDIO_PACKAGE_NAME streetgan-studio)
set(CPACK_DEBIAN_STUDIO_PACKAGE_SECTION science)
set(CPACK_DEBIAN_STUDIO_PACKAGE_DEPENDS "streetgan (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_STUDIO_PACKAGE_RECOMMENDS "openssh-client")
set(CPACK_COMPONENT_STUDIO_DESCRIPTION "train a DCGAN on street photographs and watch it learn
StreetGAN Studio is a desktop application for researchers who train a
DCGAN on street-level photographs: live charts of the losses, throughput
and Parzen log-likelihood, a latent space explorer, walk export, runs
compared side by side, and training on this computer or on a GPU host over
SSH. A demo preset and procedurally drawn demo streets show it learning in
five minutes.")
include(CPack)
