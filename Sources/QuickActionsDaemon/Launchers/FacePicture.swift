import CPNG
import CTurboJPEG
import QuickActions

/// A photo's face as a picture every desktop draws round: the photo decoded (JPEG by
/// libjpeg-turbo's TurboJPEG, PNG by libpng), its centre square scaled to `side` pixels, cut
/// round by an anti-aliased alpha circle and encoded as PNG (libpng). A launcher draws it at 16
/// to 96 pixels, twice that on a HiDPI screen. The decoders are libraries; the scaling (a box
/// filter) and the circle are arithmetic on the pixels.
enum FacePicture {
    /// The picture's width and height.
    static let side = 128

    /// Pixels, 8-bit RGBA, row after row with no padding.
    struct Pixels: Equatable {
        var width: Int
        var height: Int
        var rgba: [UInt8]
    }

    /// The PNG document of `image`'s face; throws why the photo cannot be decoded.
    static func png(of image: FaceImage) throws(FaceImage.Problem) -> [UInt8] {
        let decoded = switch image.kind {
        case .jpeg: try decodeJPEG(image.bytes, atLeast: side)
        case .png: try decodePNG(image.bytes)
        }
        return try encodePNG(round(decoded, side: side))
    }

    // MARK: Decoding

    /// A JPEG decoded at the smallest of TurboJPEG's scaling factors (1/8 to 2) that keeps both
    /// sides at least `least` (or at full size when it is smaller): a 4096-pixel photo is decoded
    /// at 512, never allocated whole. A warning (a truncated file) counts as an error: such a
    /// picture is partly grey.
    static func decodeJPEG(_ bytes: [UInt8], atLeast least: Int) throws(FaceImage.Problem) -> Pixels {
        let library = try ImageLibraries.loaded.get()
        guard let handle = library.tjInitDecompress() else { throw .undecodable("TurboJPEG cannot start") }
        defer { _ = library.tjDestroy(handle) }
        let problem = { FaceImage.Problem.undecodable(library.tjGetErrorStr2(handle).map { String(cString: $0) } ?? "TurboJPEG failed") }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = 0
        let header = bytes.withUnsafeBufferPointer {
            library.tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colourspace)
        }
        guard header == 0 else { throw problem() }
        try checkBounds(width: Int(width), height: Int(height))
        var scaled = (width: Int(width), height: Int(height))
        var count: Int32 = 0
        if let factors = library.tjGetScalingFactors(&count) {
            for factor in UnsafeBufferPointer(start: factors, count: Int(count)) where factor.denom > 0 {
                // TurboJPEG's TJSCALED: the side times the factor, rounded up.
                let side = { (dimension: Int32) in Int((dimension * factor.num + factor.denom - 1) / factor.denom) }
                let candidate = (width: side(width), height: side(height))
                if min(candidate.width, candidate.height) >= least, candidate.width < scaled.width { scaled = candidate }
            }
        }
        var rgba = [UInt8](repeating: 0, count: scaled.width * scaled.height * 4)
        let status = rgba.withUnsafeMutableBufferPointer { pixels in
            bytes.withUnsafeBufferPointer {
                library.tjDecompress2(handle, $0.baseAddress, UInt($0.count), pixels.baseAddress, Int32(scaled.width), 0, Int32(scaled.height),
                              Int32(TJPF_RGBA.rawValue), TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS)
            }
        }
        guard status == 0 else { throw problem() }
        return Pixels(width: scaled.width, height: scaled.height, rgba: rgba)
    }

    /// A PNG decoded to 8-bit RGBA (any colour type, palette, 16-bit or grey, converted by libpng).
    static func decodePNG(_ bytes: [UInt8]) throws(FaceImage.Problem) -> Pixels {
        let library = try ImageLibraries.loaded.get()
        var image = png_image()
        image.version = png_uint_32(qactd_png_image_version)
        defer { library.pngFree(&image) }
        let begun = bytes.withUnsafeBufferPointer { library.pngBeginReadFromMemory(&image, $0.baseAddress, $0.count) }
        guard begun != 0 else { throw .undecodable(message(of: image)) }
        let (width, height) = (Int(image.width), Int(image.height))
        try checkBounds(width: width, height: height)
        image.format = png_uint_32(qactd_png_format_rgba)
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        let read = rgba.withUnsafeMutableBytes { library.pngFinishRead(&image, nil, $0.baseAddress, 0, nil) }
        guard read != 0 else { throw .undecodable(message(of: image)) }
        return Pixels(width: width, height: height, rgba: rgba)
    }

    /// The bounds again, from the decoder's own reading of the header, before any pixel is
    /// allocated: the size `FaceImage` read came from a parser of its own.
    private static func checkBounds(width: Int, height: Int) throws(FaceImage.Problem) {
        guard width > 0, height > 0 else { throw .notAnImage }
        guard width <= FaceImage.maxSide, height <= FaceImage.maxSide else { throw .tooManyPixels(width: width, height: height) }
    }

    /// libpng's words for its last error or warning.
    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    // MARK: Encoding

    /// `pixels` as a PNG document (libpng's defaults: the same pixels give the same bytes, so a
    /// face's file name, from its content, stays).
    static func encodePNG(_ pixels: Pixels) throws(FaceImage.Problem) -> [UInt8] {
        let library = try ImageLibraries.loaded.get()
        var image = png_image()
        image.version = png_uint_32(qactd_png_image_version)
        (image.width, image.height) = (png_uint_32(pixels.width), png_uint_32(pixels.height))
        image.format = png_uint_32(qactd_png_format_rgba)
        // No filter search and a lighter deflate: a face is small either way, and it is made
        // while the daemon starts.
        image.flags = png_uint_32(qactd_png_image_flag_fast)
        defer { library.pngFree(&image) }
        var size: png_alloc_size_t = 0
        let measured = pixels.rgba.withUnsafeBytes { library.pngWriteToMemory(&image, nil, &size, 0, $0.baseAddress, 0, nil) }
        guard measured != 0, size > 0 else { throw .undecodable("libpng cannot encode the face: \(message(of: image))") }
        var document = [UInt8](repeating: 0, count: Int(size))
        let written = document.withUnsafeMutableBytes { memory in
            pixels.rgba.withUnsafeBytes { library.pngWriteToMemory(&image, memory.baseAddress, &size, 0, $0.baseAddress, 0, nil) }
        }
        guard written != 0 else { throw .undecodable("libpng cannot encode the face: \(message(of: image))") }
        document.removeLast(document.count - min(document.count, Int(size)))
        return document
    }

    // MARK: Scaling and the circle

    /// The centre square of `pixels` (the whole photo's shorter side: a portrait loses its top
    /// and bottom, a landscape its sides) scaled to `side` × `side` by a box filter, then cut
    /// round: a pixel's alpha is the part of it inside the circle the square holds. Colours are
    /// averaged weighted by their alpha, so a transparent photo's edges do not darken.
    static func round(_ pixels: Pixels, side: Int) -> Pixels {
        let square = min(pixels.width, pixels.height)
        let columns = boxWeights(from: (pixels.width - square) / 2, count: square, to: side)
        let rows = boxWeights(from: (pixels.height - square) / 2, count: square, to: side)
        // Across first: each source row of the square to `side` premultiplied columns.
        var across = [Float](repeating: 0, count: square * side * 4)
        pixels.rgba.withUnsafeBufferPointer { source in
            across.withUnsafeMutableBufferPointer { target in
                for row in 0..<square {
                    let sourceRow = (rows.first + row) * pixels.width * 4
                    for (column, weights) in columns.weights.enumerated() {
                        var sum: (Float, Float, Float, Float) = (0, 0, 0, 0)
                        for (index, weight) in weights {
                            let offset = sourceRow + index * 4
                            let alpha = Float(source[offset + 3]) * weight
                            sum.0 += Float(source[offset]) * alpha
                            sum.1 += Float(source[offset + 1]) * alpha
                            sum.2 += Float(source[offset + 2]) * alpha
                            sum.3 += alpha
                        }
                        let offset = (row * side + column) * 4
                        (target[offset], target[offset + 1], target[offset + 2], target[offset + 3]) = sum
                    }
                }
            }
        }
        // Then down, and the circle.
        var face = [UInt8](repeating: 0, count: side * side * 4)
        let radius = Float(side) / 2
        for (row, weights) in rows.weights.enumerated() {
            for column in 0..<side {
                var sum: (Float, Float, Float, Float) = (0, 0, 0, 0)
                for (index, weight) in weights {
                    let offset = ((index - rows.first) * side + column) * 4
                    sum.0 += across[offset] * weight
                    sum.1 += across[offset + 1] * weight
                    sum.2 += across[offset + 2] * weight
                    sum.3 += across[offset + 3] * weight
                }
                let (x, y) = (Float(column) + 0.5 - radius, Float(row) + 0.5 - radius)
                let inside = min(max(radius - (x * x + y * y).squareRoot() + 0.5, 0), 1)
                guard sum.3 > 0, inside > 0 else { continue }
                let offset = (row * side + column) * 4
                face[offset] = byte(sum.0 / sum.3)
                face[offset + 1] = byte(sum.1 / sum.3)
                face[offset + 2] = byte(sum.2 / sum.3)
                face[offset + 3] = byte(sum.3 * inside)
            }
        }
        return Pixels(width: side, height: side, rgba: face)
    }

    /// For each of `target` output pixels, the source pixels of `count` from `first` it covers
    /// and how much of each (the parts sum to 1): the box filter, one axis. Enlarging works too
    /// (each output covers part of one or two sources).
    static func boxWeights(from first: Int, count: Int, to target: Int) -> (first: Int, weights: [[(Int, Float)]]) {
        let step = Double(count) / Double(target)
        let weights = (0..<target).map { output in
            let (start, end) = (Double(output) * step, Double(output + 1) * step)
            var parts: [(Int, Float)] = []
            var index = Int(start)
            while Double(index) < end, index < count {
                let covered = min(end, Double(index + 1)) - max(start, Double(index))
                if covered > 0 { parts.append((first + index, Float(covered / step))) }
                index += 1
            }
            return parts
        }
        return (first, weights)
    }

    private static func byte(_ value: Float) -> UInt8 {
        UInt8(min(max(value.rounded(), 0), 255))
    }
}
