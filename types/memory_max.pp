# @summary A clone's memory limit (systemd's `MemoryMax=`).
#
# Bytes as an Integer, or a string of bytes with an optional `K`, `M`, `G`
# or `T` suffix (base 1024).
#
# @example
#   '512M', 1073741824
type Clone_army::Memory_max = Variant[Integer[1, 999999999999999], Pattern[/\A[1-9][0-9]{0,14}[KMGT]?\z/]]
