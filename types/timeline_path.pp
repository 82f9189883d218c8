# @summary A path the recorder's unit names (its timeline, the access log it reads): absolute, in a directory below `/`.
#
# An absolute path with at least a directory and a file name: letters,
# digits and `.`, `_`, `-`, `@`, `+` in each part (no `.` or `..` part): the path goes into a systemd unit, whose settings give other
# characters meanings of their own. The rotated files are written beside it
# (`<path>.1`, `<path>.2`, ...), and that directory is the only one the
# recorder's service may write to.
#
# @example
#   '/var/log/puppet-clone-army/timeline.jsonl'
type Clone_army::Timeline_path = Pattern[/\A(?!.*\/\.\.?(\/|\z))(\/[A-Za-z0-9._@+-]+){2,}\z/]
