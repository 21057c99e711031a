// libjpeg-turbo's TurboJPEG API: errors are return values (tjGetErrorStr2), no longjmp.
// qactd opens the library when it first draws a photo's face (`ImageLibraries`), so it is not
// linked: these are the types of the functions it looks up, taken from their declarations.
#include <turbojpeg.h>

typedef __typeof__(tjInitDecompress) *qactd_tjInitDecompress;
typedef __typeof__(tjDestroy) *qactd_tjDestroy;
typedef __typeof__(tjGetErrorStr2) *qactd_tjGetErrorStr2;
typedef __typeof__(tjDecompressHeader3) *qactd_tjDecompressHeader3;
typedef __typeof__(tjGetScalingFactors) *qactd_tjGetScalingFactors;
typedef __typeof__(tjDecompress2) *qactd_tjDecompress2;
