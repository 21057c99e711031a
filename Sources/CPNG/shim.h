// libpng's simplified API (png_image): errors are return values, no setjmp.
#include <png.h>

// Macros Swift does not import, as constants.
static const unsigned int qactd_png_image_version = PNG_IMAGE_VERSION;
static const unsigned int qactd_png_format_rgba = PNG_FORMAT_RGBA;
static const unsigned int qactd_png_image_flag_fast = PNG_IMAGE_FLAG_FAST;
