# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Apply_source' do
  it { is_expected.to allow_values('/srv/clone-army-apply', '/srv/apply_v1.2/', '/', :undef) }

  it do
    is_expected.not_to allow_values('srv/apply', '', '/srv/a b', '/srv/a:b', '/srv/%i', "/srv/a\nb",
                                    '/srv/../etc', '/srv/..', 42)
  end
end
