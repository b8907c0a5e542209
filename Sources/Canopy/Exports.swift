@_exported public import enum CanopyCore.CanopyVersion
@_exported public import struct CanopyCore.DatabaseError
@_exported public import enum CanopyCore.JSONValue
