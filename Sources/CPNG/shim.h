// libpng's simplified API (png_image): errors are return values, no setjmp. qactd opens the
// library when it first draws a photo's face (`ImageLibraries`), so it is not linked: these are
// the types of the functions it looks up, taken from their declarations.
#include <png.h>

typedef __typeof__(png_image_begin_read_from_memory) *qactd_png_image_begin_read_from_memory;
typedef __typeof__(png_image_finish_read) *qactd_png_image_finish_read;
typedef __typeof__(png_image_free) *qactd_png_image_free;
typedef __typeof__(png_image_write_to_memory) *qactd_png_image_write_to_memory;

// Macros Swift does not import, as constants.
static const unsigned int qactd_png_image_version = PNG_IMAGE_VERSION;
static const unsigned int qactd_png_format_rgba = PNG_FORMAT_RGBA;
static const unsigned int qactd_png_image_flag_fast = PNG_IMAGE_FLAG_FAST;
