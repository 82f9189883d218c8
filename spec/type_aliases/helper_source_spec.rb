# frozen_string_literal: true

require 'spec_helper'

describe 'Clone_army::Helper_source' do
  it do
    is_expected.to allow_values('https://artifacts.example.com/clone-army/0.4.0/clone-army-0.4.0-x86_64-linux',
                                'http://127.0.0.12:8000/clone-army', 'http://[::1]:8000/clone-army', 'https://host',
                                '/srv/share/clone-army')
  end

  it do
    is_expected.not_to allow_values('clone-army', 'ftp://host/clone-army', 'puppet:///modules/clone_army/clone-army',
                                    'http:///clone-army', 'http://host/a b', "https://host/a\nb", 'file:///srv/clone-army',
                                    '', :undef, 42)
  end
end
