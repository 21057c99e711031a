// libjpeg-turbo's TurboJPEG API: errors are return values (tjGetErrorStr2), no longjmp.
#include <turbojpeg.h>
