# The lab's `web` role (LAB_ROLE=web make lab): the clones classified with
# widely used modules as Debian packages them (puppetlabs-apache with its
# stdlib and concat, puppetlabs-apt, aboe-chrony), so the server compiles and
# the agents evaluate catalogs of a few hundred resources. The lab runs the
# clones with agent_noop => true: nothing is installed in them, and the report
# says what a real run would change.
node /^clone[0-9]+\./ {
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
  # Twelve sites, each a vhost with its own docroot, logs and directories:
  # the bulk of the catalog.
  Integer[1, 12].each |Integer $site| {
    apache::vhost { "site${site}.${trusted['certname']}":
      port     => 80,
      docroot  => "/var/www/site${site}",
      priority => 10 + $site,
    }
  }
}

node default {}
