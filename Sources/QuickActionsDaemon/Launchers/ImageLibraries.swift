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
        let turboJPEG = try open("libturbojpeg.so.0")
        let png = try open("libpng16.so.16")
        return ImageLibraries(
            tjInitDecompress: try symbol(turboJPEG, "tjInitDecompress"),
            tjDestroy: try symbol(turboJPEG, "tjDestroy"),
            tjGetErrorStr2: try symbol(turboJPEG, "tjGetErrorStr2"),
            tjDecompressHeader3: try symbol(turboJPEG, "tjDecompressHeader3"),
            tjGetScalingFactors: try symbol(turboJPEG, "tjGetScalingFactors"),
            tjDecompress2: try symbol(turboJPEG, "tjDecompress2"),
            pngBeginReadFromMemory: try symbol(png, "png_image_begin_read_from_memory"),
            pngFinishRead: try symbol(png, "png_image_finish_read"),
            pngFree: try symbol(png, "png_image_free"),
            pngWriteToMemory: try symbol(png, "png_image_write_to_memory"))
    }

    private static func open(_ soname: String) throws(FaceImage.Problem) -> UnsafeMutableRawPointer {
        guard let library = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else { throw .undecodable(loaderError("cannot open \(soname)")) }
        return library
    }

    private static func symbol<Function>(_ library: UnsafeMutableRawPointer, _ name: String) throws(FaceImage.Problem) -> Function {
        guard let address = dlsym(library, name) else { throw .undecodable(loaderError("no \(name)")) }
        return unsafeBitCast(address, to: Function.self)
    }

    private static func loaderError(_ what: String) -> String {
        dlerror().map { what + ": " + String(cString: $0) } ?? what
    }
}
