@_exported import ModelCastFormat
