# @summary The lab's load-balancer role: Debian's puppetlabs-haproxy, one
#   frontend for the web tier whose backends are the members the web nodes export
#   (`lab_roles::web_member`), collected from PuppetDB.
#
# The collection is what makes twins hazardous: a twin of a web node exports a
# member too, and an lb node that collects from the PuppetDB the twins report to
# would balance onto clones. The lab runs everything in noop, and the README's
# "Twin your estate" says how a real estate keeps twins' exports away.
class lab_roles::lb {
  include haproxy
  haproxy::listen { 'web':
    ipaddress        => '0.0.0.0',
    ports            => '80',
    mode             => 'http',
    collect_exported => true,
    options          => {
      'balance' => 'roundrobin',
      'option'  => ['httpchk GET /'],
    },
  }
}
