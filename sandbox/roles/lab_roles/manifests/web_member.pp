# @summary A web node's place behind the estate's load balancer: a
#   `haproxy::balancermember` exported for `lab_roles::lb` to collect.
class lab_roles::web_member {
  @@haproxy::balancermember { $trusted['certname']:
    listening_service => 'web',
    server_names      => $trusted['certname'],
    ipaddresses       => $facts['networking']['ip'],
    ports             => '80',
    options           => 'check',
  }
}
