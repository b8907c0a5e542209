import Canopy
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Peak resident set size of this process in MB (`getrusage` maxrss, KiB on Linux).
func peakRSSMB() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// Current resident set size in bytes (`/proc/self/statm`, second field, in pages).
func currentRSSBytes() -> Int {
    let fd = open("/proc/self/statm", O_RDONLY)
    guard fd >= 0 else { return -1 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return -1 }
    let fields = buffer[0..<count].split(separator: UInt8(ascii: " "))
    guard fields.count >= 2, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return -1 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// glibc's `malloc_trim` (in <malloc.h>, which the Glibc module does not export), looked up once.
private let mallocTrim: (@convention(c) (Int) -> Int32)? = {
    guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
}()

/// Returns freed heap memory to the kernel (every malloc arena), then the current RSS in bytes.
func trimmedRSSBytes() -> Int {
    _ = mallocTrim?(0)
    return currentRSSBytes()
}

func megabytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }
