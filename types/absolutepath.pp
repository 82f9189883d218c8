# @summary An absolute path on the host (no stdlib needed).
#
# @example
#   '/usr/local/sbin/clone-army'
type Clone_army::Absolutepath = Pattern[/\A\/[^\x00]*\z/]
