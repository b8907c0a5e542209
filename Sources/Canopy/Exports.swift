@_exported public import enum CanopyCore.JSONValue
@_exported public import struct CanopyCore.DatabaseError
