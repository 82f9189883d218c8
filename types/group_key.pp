# @summary What the recorder groups the clones' runs by (`record_group_by`).
#
# `node`, `environment`, or a trusted extension a twin takes: one of Puppet's
# registered `pp_*` names (not `pp_preshared_key`, a secret, nor the
# authorization extensions), its OID `1.3.6.1.4.1.34380.1.1.N`, or a dotted
# OID of the private arc `1.3.6.1.4.1.34380.1.2.N` (at most 64 characters
# after the arc, which the helper checks); or a fact of the twins' nodes,
# `facts.` and its dotted path (`facts.os.family`; up to 8 names of A-Z, a-z,
# 0-9, '_' and '-', 64 characters each). The pattern is the helper's
# (`clone-army schema`, `group_key`), which the module's specs hold it to.
#
# @example
#   'pp_role', 'environment', '1.3.6.1.4.1.34380.1.2.1', 'facts.os.family'
type Clone_army::Group_key = Pattern[/\A(node|environment|pp_uuid|pp_instance_id|pp_image_name|pp_cost_center|pp_product|pp_project|pp_application|pp_service|pp_employee|pp_created_by|pp_environment|pp_role|pp_software_version|pp_department|pp_cluster|pp_provisioner|pp_region|pp_datacenter|pp_zone|pp_network|pp_securitypolicy|pp_cloudplatform|pp_apptier|pp_hostname|pp_owner|1\.3\.6\.1\.4\.1\.34380\.1\.1\.(1|2|3|5|6|7|8|9|10|11|12|13|14|15|16|17|18|19|20|21|22|23|24|25|26)|1\.3\.6\.1\.4\.1\.34380\.1\.2\.[0-9]{1,9}(\.[0-9]{1,9})*|facts\.[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,7})\z/] # lint:ignore:140chars
