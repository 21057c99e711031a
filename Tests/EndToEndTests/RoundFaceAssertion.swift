import XCTest

/// A face read off a screenshot is round: `shape` (scratch_desktop.icon_shape, for a photo of one
/// colour) is an icon-sized box whose centre has the colour and whose corners show the
/// background, the colour filling about π/4 of it; a square icon fills its corners and all of it.
func assertRoundFace(_ shape: [String: Any]?, _ context: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line) {
    guard let shape else { return XCTFail("the face's shape was not read: \(context())", file: file, line: line) }
    let box = shape["box"] as? [Int] ?? []
    XCTAssertGreaterThanOrEqual(box.count == 4 ? min(box[2], box[3]) : 0, 12, "an icon-sized box: \(shape)", file: file, line: line)
    XCTAssertEqual(shape["centre"] as? Int, 9, "the photo's colour in the middle: \(shape)", file: file, line: line)
    XCTAssertEqual(shape["corners"] as? Int, 0, "round: the corners show the menu: \(shape)", file: file, line: line)
    XCTAssertLessThan(shape["fill"] as? Double ?? 1, 0.9, "round, not square: \(shape)", file: file, line: line)
}
