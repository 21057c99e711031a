@testable import QuickActionsDaemon
import XCTest

final class SharedLibraryTests: XCTestCase {
    func testAFunctionOfALibraryOpenedByItsSoname() throws {
        typealias Strlen = @convention(c) (UnsafePointer<CChar>) -> Int
        let libc = try SharedLibrary(soname: "libc.so.6")
        let strlen: Strlen = try libc.function("strlen")
        XCTAssertEqual("quick".withCString { strlen($0) }, 5)
    }

    func testTheLoaderSaysWhatIsMissing() throws {
        XCTAssertThrowsError(try SharedLibrary(soname: "libqactd-none.so.0")) { error in
            let message = (error as? SharedLibrary.LoadFailure)?.message ?? ""
            XCTAssertTrue(message.hasPrefix("cannot open libqactd-none.so.0: "), message)
        }
        let libc = try SharedLibrary(soname: "libc.so.6")
        XCTAssertThrowsError(try libc.function("qactd_no_such_function") as @convention(c) () -> Void) { error in
            let message = (error as? SharedLibrary.LoadFailure)?.message ?? ""
            XCTAssertTrue(message.hasPrefix("libc.so.6 has no qactd_no_such_function"), message)
        }
    }
}
