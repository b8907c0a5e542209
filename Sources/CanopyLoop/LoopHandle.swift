import CLibUV

/// A Swift object kept alive by a libuv handle until the handle's close callback has run.
///
/// The handle's `data` holds one retain of the owner (`Unmanaged.passRetained`), taken when the
/// handle is initialised and given back by ``releaseClosedHandle(_:)``. C callbacks cannot capture,
/// so `data` is the only way back to Swift; the owner never frees the handle itself, because libuv
/// may still call into it until its close callback has run.
protocol LoopHandleOwner: AnyObject {
    /// Called on the loop thread once libuv has finished with the handle.
    func handleDidClose()
}

/// The close callback of every handle an ``EventLoop`` creates, on the loop thread: releases the
/// owner stored in `data` (if any), tells it, then frees the handle's memory, which must have
/// come from `UnsafeMutablePointer<…>.allocate(capacity: 1)`.
func releaseClosedHandle(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
    guard let handle else { return }
    if let data = handle.pointee.data {
        handle.pointee.data = nil
        let owner = Unmanaged<AnyObject>.fromOpaque(data).takeRetainedValue()
        (owner as? any LoopHandleOwner)?.handleDidClose()
    }
    UnsafeMutableRawPointer(handle).deallocate()
}
