# The lab's estate (LAB_TWINS=1 make lab): nodes classified by the role in their
# certificate, `$trusted['extensions']['pp_role']`, as many estates are. The
# lab's "production" nodes ask for theirs in their certificate requests, and
# their twins take the same from PuppetDB. Web nodes export their place behind
# the load balancer, which lb nodes collect.
node default {
  case $trusted['extensions']['pp_role'] {
    'web': {
      include lab_roles::web
      include lab_roles::web_member
    }
    'lb': { include lab_roles::lb }
    'cache': { include lab_roles::cache }
    default: {}
  }
}
