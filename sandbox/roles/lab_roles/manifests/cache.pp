# @summary The lab's cache role: Debian's saz-memcached, one memcached sized for
#   the node.
class lab_roles::cache {
  class { 'memcached':
    max_memory => '50%',
    listen     => '0.0.0.0',
  }
}
