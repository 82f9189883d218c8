# @summary The lab's web role: widely used modules as Debian packages them
#   (puppetlabs-apache with its stdlib and concat, puppetlabs-apt, aboe-chrony), so
#   the server compiles, and the agents evaluate, catalogs of a few hundred
#   resources.
#
# The lab runs its clones in noop: nothing is installed in them, and their reports
# say what a real run would change.
class lab_roles::web {
  include apt
  include chrony
  class { 'apache':
    default_vhost => false,
    mpm_module    => 'event',
  }
  include apache::mod::ssl
  include apache::mod::headers
  include apache::mod::rewrite
  include apache::mod::status
  # Twelve sites, each a vhost with its own docroot, logs and directories: the
  # bulk of the catalog.
  Integer[1, 12].each |Integer $site| {
    apache::vhost { "site${site}.${trusted['certname']}":
      port     => 80,
      docroot  => "/var/www/site${site}",
      priority => 10 + $site,
    }
  }
}
