# @summary Installs the `clone-army` helper that the types' providers run.
#
# @api private
#
# The binary comes from the module's `files/clone-army` (in the module
# tarball that `make dist` builds; `make build` puts it there in a
# checkout: a statically linked build that runs on every supported host),
# or from `helper_source`, verified against `helper_checksum`.
#
class clone_army::install {
  $helper_source = $clone_army::helper_source
  $helper_checksum = $clone_army::helper_checksum

  if $helper_source =~ NotUndef and $helper_checksum =~ Undef {
    fail(@("MSG"/L))
      clone_army: helper_source needs helper_checksum, the helper's sha256 \
      (the release's clone-army-<version>-<arch>-linux.sha256, or `sha256sum` of the file): \
      the checksum is what makes a fetched helper trustworthy, over http as over https
      |- MSG
  }
  if $helper_source =~ Undef and $helper_checksum =~ NotUndef {
    fail('clone_army: helper_checksum is only used with helper_source; helper_source is not set')
  }

  if $helper_source =~ Undef {
    # The kernel's name for the CPU (uname -m); the distribution's when missing.
    # Facts that name neither leave it to the install's own check below (a
    # helper that does not run on the host is not installed).
    $arch_fact = $facts.dig('os', 'hardware') ? {
      undef   => 'os.architecture',
      default => 'os.hardware',
    }
    $arch = $facts.dig('os', 'hardware').lest || { $facts.dig('os', 'architecture') }
    if $arch =~ NotUndef and $arch !~ Clone_army::Helper_arch {
      # "Clone_army::Helper_arch = Enum['amd64', 'x86_64']"
      $supported = String(Clone_army::Helper_arch)
      fail(@("MSG"/L))
        clone_army: this host's CPU architecture is '${arch}' (${arch_fact}), and the module's \
        helper (files/clone-army) runs only on ${supported}. Build the helper for \
        '${arch}' (cargo build --release in the module's source) and give it with \
        helper_source and helper_checksum
        |- MSG
    }
    # Only a built or released module has the binary: a git checkout has not.
    if find_file('clone_army/clone-army') =~ Undef {
      fail(@("MSG"/L))
        clone_army: the module has no helper binary (files/clone-army is not in it: \
        a git checkout, e.g. deployed by r10k or Code Manager, does not carry it). \
        Either install the module from its release tarball (`puppet module install \
        clonearmy-clone_army-<version>.tar.gz`, as `make dist` builds it), or set \
        helper_source and helper_checksum to the release's helper \
        (clone-army-<version>-<arch>-linux) and its sha256
        |- MSG
    }
  }

  # The helper about to replace the installed one must run here and answer
  # in the protocol the providers speak; otherwise the old one stays. The
  # script goes inside single quotes and validate_cmd replaces every percent
  # sign with the file: it has neither.
  $check = regsubst(@(SH/L), 'PROTOCOL', String(clone_army::helper_protocol()), 'G')
    p=$("$1" schema 2>/dev/null | head -c 200 | tr -d " \t\r\n" | cut -d, -f1); p=${p#\{\"protocol\":}; \
    case $p in PROTOCOL) exit 0 ;; *[!0-9]*|"") echo "clone_army: the new helper does not run on this host \
    or is not a clone-army helper (its schema answers no protocol version); the installed one is kept"; exit 1 ;; esac; \
    if [ "$p" -gt PROTOCOL ]; then side="the helper is newer than the module: upgrade the clone_army module \
    to the release of the helper, or install the helper of the release of the module"; else side="the helper is \
    older than the module: install the helper of the release of the module"; fi; \
    echo "clone_army: the new helper speaks protocol version $p, this module speaks version PROTOCOL; \
    $side (helper_source and helper_checksum, or the files/clone-army of the module). The installed one is kept"; exit 1
    |- SH

  file { $clone_army::helper_path:
    ensure         => file,
    source         => $helper_source.lest || { 'puppet:///modules/clone_army/clone-army' },
    checksum       => $helper_source.then |$_| { 'sha256' },
    checksum_value => $helper_checksum,
    validate_cmd   => "/bin/sh -c '${check}' clone-army-check %",
    owner          => 'root',
    group          => 'root',
    mode           => '0755',
  }

  # The helper's own man page and bash, zsh and fish completions under /usr/local,
  # made from its command line. `--check` compares them with what the
  # installed helper makes: a new helper refreshes them, a failed run is
  # retried at the next. `test -x` first: in a --noop run before the helper
  # exists the check must say "not in place" (pending), not fail as a missing
  # command would, and with it the fleet that comes after the install.
  $helper = shellquote($clone_army::helper_path)
  exec { 'clone_army::install docs':
    command  => "${helper} host docs",
    unless   => "test -x ${helper} && ${helper} host docs --check",
    provider => shell,
    require  => File[$clone_army::helper_path],
  }
}
