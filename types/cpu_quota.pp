# @summary A clone's CPU limit (systemd's `CPUQuota=`), in percent of one CPU.
#
# `'1%'` to `'100000%'`, or the percentage as an Integer.
#
# @example
#   '50%', 200
type Clone_army::Cpu_quota = Variant[Integer[1, 100000], Pattern[/\A([1-9][0-9]{0,4}|100000)%\z/]]
