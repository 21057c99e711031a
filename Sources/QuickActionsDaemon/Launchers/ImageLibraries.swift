import CPNG
import CTurboJPEG
import Glibc
import QuickActions

/// libjpeg-turbo's TurboJPEG and libpng, opened the first time a photo's face is drawn instead of
/// linked: a daemon that draws none (no photo shown, `FavoriteFaces=no`, or every face already
/// drawn before a restart) maps neither library nor the zlib libpng brings, about a third of a MiB
/// of its memory at rest. Opened once, never closed; a library that cannot be opened makes every
/// photo's face its monogram, with the loader's words logged once per contact.
struct ImageLibraries: @unchecked Sendable {  // C function addresses, immutable
    let tjInitDecompress: qactd_tjInitDecompress
    let tjDestroy: qactd_tjDestroy
    let tjGetErrorStr2: qactd_tjGetErrorStr2
    let tjDecompressHeader3: qactd_tjDecompressHeader3
    let tjGetScalingFactors: qactd_tjGetScalingFactors
    let tjDecompress2: qactd_tjDecompress2
    let pngBeginReadFromMemory: qactd_png_image_begin_read_from_memory
    let pngFinishRead: qactd_png_image_finish_read
    let pngFree: qactd_png_image_free
    let pngWriteToMemory: qactd_png_image_write_to_memory

    /// The libraries by their sonames, those of Debian's `libturbojpeg0` and `libpng16-16`.
    static let loaded: Result<ImageLibraries, FaceImage.Problem> = Result { () throws(FaceImage.Problem) in
        do throws(SharedLibrary.LoadFailure) {
            let turboJPEG = try SharedLibrary(soname: "libturbojpeg.so.0")
            let png = try SharedLibrary(soname: "libpng16.so.16")
            return ImageLibraries(
                tjInitDecompress: try turboJPEG.function("tjInitDecompress"),
                tjDestroy: try turboJPEG.function("tjDestroy"),
                tjGetErrorStr2: try turboJPEG.function("tjGetErrorStr2"),
                tjDecompressHeader3: try turboJPEG.function("tjDecompressHeader3"),
                tjGetScalingFactors: try turboJPEG.function("tjGetScalingFactors"),
                tjDecompress2: try turboJPEG.function("tjDecompress2"),
                pngBeginReadFromMemory: try png.function("png_image_begin_read_from_memory"),
                pngFinishRead: try png.function("png_image_finish_read"),
                pngFree: try png.function("png_image_free"),
                pngWriteToMemory: try png.function("png_image_write_to_memory"))
        } catch {
            throw .undecodable(error.message)
        }
    }
}
