# @summary The CPU architectures the module's own helper (`files/clone-army`) runs on.
#
# @api private
#
# The one list of them: class clone_army refuses a host whose
# `$facts['os']['hardware']` (the kernel's `uname -m`; when missing,
# `$facts['os']['architecture']`, the distribution's name for it) is not
# one of these, unless `helper_source` gives a helper built for the host.
# The module's helper is built for `x86_64-unknown-linux-gnu` (statically
# linked): `x86_64`, which Debian and Ubuntu call `amd64`.
#
# @example
#   'x86_64', 'amd64'
type Clone_army::Helper_arch = Enum['x86_64', 'amd64']
