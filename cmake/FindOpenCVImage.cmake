# Finds the three OpenCV modules the engine uses (core, imgproc, imgcodecs) without needing
# Debian's libopencv-dev meta package (which pulls in every OpenCV module and its CMake files).
# Defines the imported targets OpenCVImage::OpenCVImage (the three) and OpenCVImage::Core (core
# alone: its exceptions, for what must not load the image codecs' libraries).
find_path(OpenCVImage_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4)
foreach(module core imgproc imgcodecs)
  find_library(OpenCVImage_${module}_LIBRARY NAMES opencv_${module})
  list(APPEND _opencv_image_libs OpenCVImage_${module}_LIBRARY)
endforeach()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenCVImage
  REQUIRED_VARS OpenCVImage_INCLUDE_DIR ${_opencv_image_libs})
if(OpenCVImage_FOUND AND NOT TARGET OpenCVImage::OpenCVImage)
  add_library(OpenCVImage::OpenCVImage INTERFACE IMPORTED)
  set_target_properties(OpenCVImage::OpenCVImage PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${OpenCVImage_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES
      "${OpenCVImage_imgcodecs_LIBRARY};${OpenCVImage_imgproc_LIBRARY};${OpenCVImage_core_LIBRARY}")
endif()
if(OpenCVImage_FOUND AND NOT TARGET OpenCVImage::Core)
  add_library(OpenCVImage::Core INTERFACE IMPORTED)
  set_target_properties(OpenCVImage::Core PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${OpenCVImage_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${OpenCVImage_core_LIBRARY}")
endif()
