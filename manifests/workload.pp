# @summary A small workload for the clones' own catalogs: static and changing files.
#
# Like Puppet's clamps load test, it gives each agent run something to do:
# `static_files` files whose content never changes (checked every run, changed
# never) and `changing_files` files whose content changes at every compile
# (a change, with its event and report entry, every run), each `file_bytes`
# bytes, in `directory`. Declare it in the catalog the clones get: the
# server's `site.pp` for the clones' certnames, or a manifest in the
# `apply_source` of masterless clones. It is not meant for the load host
# itself.
#
# The directory is managed wholly by this class: files in it that it does
# not declare are removed (so lowering a count removes the surplus files).
#
# @example In the server's site.pp, for the clones of load host load1
#   node /^clone\d+\.load1\.example\.com$/ {
#     class { 'clone_army::workload':
#       static_files   => 20,
#       changing_files => 5,
#       file_bytes     => 4096,
#     }
#   }
#
# @example In an apply source's `manifests/site.pp` (this module's `manifests/`, `types/` in its `modules/clone_army`)
#   include clone_army::workload
#
# @param static_files
#   How many files with fixed content (`static_1` ...), 0 to 10000.
#
#   Example: `static_files => 100`
#
# @param changing_files
#   How many files whose content changes at every run (`changing_1` ...),
#   0 to 10000: the text starts with the compile's time, epoch seconds and
#   nanoseconds.
#
#   Example: `changing_files => 10`
#
# @param file_bytes
#   The size of each file in bytes, 32 to 1048576 (1 MiB): its text padded
#   with spaces or cut short (a changing file's text starts with the compile
#   time, 20 bytes, so that cutting never keeps it the same). Every byte is in
#   the catalog, so the catalog grows by about
#   `(static_files + changing_files) * file_bytes`.
#
#   Example: `file_bytes => 4096`
#
# @param directory
#   Where the files are, in the clone; managed (and purged) by this class.
#
#   Example: `directory => '/srv/load'`
#
class clone_army::workload (
  Integer[0, 10000] $static_files = 10,
  Integer[0, 10000] $changing_files = 2,
  Integer[32, 1048576] $file_bytes = 1024,
  Clone_army::Absolutepath $directory = '/var/tmp/clone_army_workload',
) {
  file { $directory:
    ensure  => directory,
    mode    => '0755',
    recurse => true,
    purge   => true,
    force   => true,
  }

  # Exactly file_bytes characters: the text, padded with spaces or cut short.
  $size = "-${file_bytes}.${file_bytes}"

  # Integer[1, 0] would iterate backwards; with a count of 0 there is nothing.
  if $static_files > 0 {
    Integer[1, $static_files].each |Integer $index| {
      file { "${directory}/static_${index}":
        ensure  => file,
        mode    => '0644',
        content => sprintf("%${size}s", "clone_army workload: static file ${index} of ${static_files}\n"),
      }
    }
  }

  # A compile's time (epoch seconds and nanoseconds, 20 bytes) makes the content
  # new at every run. It comes first, so a short file_bytes cannot cut it off.
  $now = Timestamp.new.strftime('%s.%N')
  if $changing_files > 0 {
    Integer[1, $changing_files].each |Integer $index| {
      file { "${directory}/changing_${index}":
        ensure  => file,
        mode    => '0644',
        content => sprintf("%${size}s", "${now} clone_army workload: changing file ${index}\n"),
      }
    }
  }
}
