/// libFuzzer entry: any bytes as an `[Actions]` command's arguments (the lines before the first
/// empty line) and a contact's values (the lines after it). Whatever they hold, parsing and
/// expanding never crash, and an expansion keeps every value whole: each argument that holds a
/// field is the template's text around the field's value, unchanged.
import QuickActions

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "\n\n", maxSplits: 1, omittingEmptySubsequences: false)
    let arguments = (parts.first ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let valueLines = parts.count > 1 ? parts[1].split(separator: "\n", omittingEmptySubsequences: false).map(String.init) : []
    func value(_ index: Int) -> String { index < valueLines.count ? valueLines[index] : "" }
    guard let template = try? CommandTemplate(arguments: arguments) else { return 0 }
    let values = CommandTemplateValues(
        name: value(0), email: value(1), identifier: value(2), title: value(3), subtitle: value(4), type: value(5), file: value(6))
    guard case .success(let argv) = template.expand(values) else { return 0 }
    // One argument per template argument, less the ones that were a single empty field.
    precondition(argv.count <= template.arguments.count)
    // The program is the template's text alone (its braces unescaped): no field reaches it.
    guard case .text(let program)? = template.arguments.first?.first, template.arguments[0].count == 1 else {
        preconditionFailure("a program with a field was accepted")
    }
    precondition(argv.first == program)
    for expanded in argv.dropFirst() where expanded.hasPrefix("-") {
        // A leading dash is the template's own (after fields that came out empty), never a value's.
        precondition(template.arguments.contains { pieces in
            pieces.contains { if case .text(let literal) = $0 { literal.hasPrefix("-") } else { false } }
        })
    }
    return 0
}
