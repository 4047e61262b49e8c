/// A value bound straight to a statement parameter.
package enum RawValue {
    case blob([UInt8])
    case integer(Int64)
    case text(String)
    case null
}
