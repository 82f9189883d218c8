# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Selinux_context' do
  it do
    is_expected.to allow_values('system_u:system_r:container_t:s0', 'system_u:object_r:container_file_t:s0',
                                'system_u:system_r:container_t:s0:c1,c2', 'system_u:system_r:spc_t:s0-s0:c0.c1023',
                                'unconfined_u:unconfined_r:unconfined_t')
  end

  it do
    is_expected.not_to allow_values('container_t', 'system_u:system_r', 'system_u::container_t:s0',
                                    'system_u:system_r:container_t:', 'system_u:system_r:container_t:s0 --bind=/',
                                    "system_u:system_r:container_t:s0\n", 'system_u:system_r:container_t:$x', :undef)
  end
end
