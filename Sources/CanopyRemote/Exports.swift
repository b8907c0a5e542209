@_exported public import Canopy
